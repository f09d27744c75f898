/** Sender ID types (`sender_id`) per version: the one list the client, editor and simulator use. */
import type { ApiVersion } from './operations';

export const SENDER_TYPES: Record<ApiVersion, readonly string[]> = {
  '1.0': ['gSystem', 'gShort', 'gText', 'gOwn'],
  '2.0': ['gSystem', 'gShort', 'gText', 'gOwn', 'gMobile', 'gPush', 'gProfile'],
};

/** Types whose `sender_id_value` is required, with what the value is (editor label key). */
export const SENDER_VALUE_KIND: Readonly<Record<string, 'verified_number' | 'text_sender' | 'profile_id' | 'key'>> = {
  gOwn: 'verified_number',
  gText: 'text_sender',
  gProfile: 'profile_id',
  gMobile: 'key',
  gPush: 'key',
};

/** The editor's choice "a sender profile id": typed in the value field, sent as `sender_id` itself. */
export const PROFILE_ID_CHOICE = 'profile_id';
