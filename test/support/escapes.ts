/** Collects unhandled rejections and uncaught exceptions while a suite runs (they must stay none). */
export function watchEscapes(): { escaped: unknown[]; start(): void; stop(): void } {
  const escaped: unknown[] = [];
  const onEscape = (error: unknown) => escaped.push(error);
  return {
    escaped,
    start: () => {
      process.on('unhandledRejection', onEscape);
      process.on('uncaughtException', onEscape);
    },
    stop: () => {
      process.off('unhandledRejection', onEscape);
      process.off('uncaughtException', onEscape);
    },
  };
}
