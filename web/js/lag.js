// The network time of this client, reported with each move as `lag_ms`:
// a move costs about one round trip of the player's clock (the opponent's
// move reaching us, ours reaching the server), so the server credits it back
// within the player's lag quota (README, "Presence, grace, heartbeat and lag").

/** The most the server accepts as `lag_ms`. */
export const MAX_LAG_MS = 60_000;
/** How much each new sample moves the estimate. */
const MIX = 0.25;

/** A smoothed round-trip time from timed requests. */
export class LagMeter {
  constructor() {
    this.estimate = null;
  }

  /** Takes the round trip of one request, in ms. */
  record(rttMs) {
    if (!Number.isFinite(rttMs) || rttMs < 0) return;
    const sample = Math.min(rttMs, MAX_LAG_MS);
    this.estimate = this.estimate === null ? sample : this.estimate + MIX * (sample - this.estimate);
  }

  /** What to send as `lag_ms`: a whole number of ms, or undefined before any sample. */
  lagMs() {
    return this.estimate === null ? undefined : Math.round(Math.min(MAX_LAG_MS, Math.max(0, this.estimate)));
  }

  /** Runs `request` (a function answering a promise), timing it when it succeeds. */
  async timed(request) {
    const started = performance.now();
    const answer = await request();
    this.record(performance.now() - started);
    return answer;
  }
}
