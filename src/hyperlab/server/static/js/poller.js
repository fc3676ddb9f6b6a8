// Calling an async function again and again: every `interval` ms, at once when it asks for
// more, slower after failures, and not at all while the tab is hidden.

export class Poller {
  /** `tick()` may return a number: the delay before the next call (0: at once). */
  constructor(tick, interval) {
    this.tick = tick;
    this.interval = interval;
    this.timer = null;
    this.running = false;
    this.busy = false;
    this.failures = 0;
    this.onVisible = () => {
      if (!document.hidden && this.running && !this.busy) this.now();
    };
  }

  start(delay = 0) {
    if (this.running) return this;
    this.running = true;
    document.addEventListener("visibilitychange", this.onVisible);
    this.schedule(delay);
    return this;
  }

  stop() {
    this.running = false;
    clearTimeout(this.timer);
    document.removeEventListener("visibilitychange", this.onVisible);
  }

  /** Change the pace; the next call comes at the new pace. */
  setInterval(ms) {
    if (ms === this.interval) return;
    this.interval = ms;
    if (this.running && !this.busy) this.schedule(ms);
  }

  /** Call now (or right after the call under way). */
  now() {
    if (!this.running) return;
    if (this.busy) {
      this.again = true;
      return;
    }
    this.schedule(0);
  }

  schedule(delay) {
    clearTimeout(this.timer);
    if (!this.running) return;
    this.timer = setTimeout(() => this.run(), delay);
  }

  async run() {
    if (!this.running) return;
    if (document.hidden) return; // resumed by visibilitychange
    this.busy = true;
    let next = this.interval;
    try {
      const asked = await this.tick();
      if (typeof asked === "number") next = asked;
      this.failures = 0;
    } catch (err) {
      if (!err || err.name !== "AbortError") {
        this.failures += 1;
        next = Math.min(15000, this.interval * 2 ** Math.min(this.failures, 4));
        console.warn("hyperlab: poll failed", err);
      }
    } finally {
      this.busy = false;
    }
    if (this.again) {
      this.again = false;
      next = 0;
    }
    this.schedule(next);
  }
}
