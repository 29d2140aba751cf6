// Both clocks, ticking locally from the server's figures: each state carries
// `x_ms`/`o_ms` as of its `server_time` and says whose time is `running`.
// The server's clock is estimated from the states received, so a skewed
// local clock does not matter.

/** Formats ms as m:ss (h:mm:ss past an hour, tenths under ten seconds). */
export function format(ms) {
  if (ms === null || ms === undefined) return '∞';
  const clamped = Math.max(0, ms);
  if (clamped < 10_000) {
    const tenths = Math.floor(clamped / 100);
    return `0:0${Math.floor(tenths / 10)}.${tenths % 10}`;
  }
  const total = Math.floor(clamped / 1000);
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = String(total % 60).padStart(2, '0');
  return h ? `${h}:${String(m).padStart(2, '0')}:${s}` : `${m}:${s}`;
}

/** The clocks of one match. */
export class Clocks {
  constructor() {
    this.clocks = null;
    this.serverTime = 0;
    // server time − local time, from recent states (the largest: least delayed).
    this.samples = [];
    this.offset = 0;
  }

  /** Takes the clocks of a new state. */
  update(clocks, localNow = Date.now()) {
    this.clocks = clocks;
    this.serverTime = Date.parse(clocks.server_time);
    this.samples.push(this.serverTime - localNow);
    if (this.samples.length > 8) this.samples.shift();
    this.offset = Math.max(...this.samples);
  }

  /** The server's time now, estimated. */
  serverNow(localNow = Date.now()) {
    return localNow + this.offset;
  }

  /** Time left for `seat` ('x' | 'o') now, or null without a limit. */
  left(seat, localNow = Date.now()) {
    const c = this.clocks;
    if (!c) return null;
    const ms = c[`${seat}_ms`];
    if (ms === null || ms === undefined) return null;
    if (c.running !== seat) return ms;
    return Math.max(0, ms - Math.max(0, this.serverNow(localNow) - this.serverTime));
  }
}
