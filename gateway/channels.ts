/** The channels a 2.0 cascade may hold, in the reference's names (shared with the editor). */
export const CHANNELS = ['viber', 'sms'] as const;
export type ChannelName = (typeof CHANNELS)[number];
/** The reference's default Viber expiration, in seconds: after it the next channel is tried. */
export const VIBER_EXPIRATION_DEFAULT = 120;
