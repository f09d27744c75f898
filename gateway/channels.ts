/** The channels a 2.0 cascade may hold, in the order the editor offers them (SMS last: it always delivers). */
export const CHANNELS = ['viber', 'whatsapp', 'rcs', 'sms'] as const;
/** A one-time password's cascade: Viber, then SMS (its page offers no other). */
export const OTP_CHANNELS = ['viber', 'sms'] as const;
/** The reference's default Viber expiration, in seconds: after it the next channel is tried. */
export const VIBER_EXPIRATION_DEFAULT = 120;
/** WhatsApp's and RCS's default expiration (their pages), in seconds. */
export const CHAT_EXPIRATION_DEFAULT = 3600;
/** The longest WhatsApp and RCS text, in characters: the platforms' limits, which the gateway passes on. */
export const CHAT_TEXT_LIMITS = { whatsapp: 4096, rcs: 3072 } as const;
/** The content kinds a channel takes: exactly one per channel (their pages). */
export const CHAT_CONTENTS = {
  whatsapp: ['message', 'template', 'file', 'otp', 'location'],
  rcs: ['message', 'file', 'card', 'carousel'],
} as const;
