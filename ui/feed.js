// The `market` WebSocket channel (docs/ws.md) for one market, kept honest: a PING every 10 s and
// the socket closed when nothing (not even PONG) arrived for 25 s, so a frozen stream never passes
// for a live one; a gap in `seq` closes it too. Every reconnect subscribes again with the last seq
// applied, so the server sends exactly the missed messages (or fresh `book` snapshots). Reconnects
// back off from 1 s to 30 s. `onState(open)` tells the page when to stop or start polling REST.

const PING_MS = 10_000;
const SILENT_MS = 25_000;

export class MarketFeed {
  /**
   * @param {{ market: string, assets: string[], onMessage: (m: any) => void, onState: (open: boolean, why?: string) => void }} o
   */
  constructor(o) {
    this.o = o;
    this.seq = null; // the last seq applied (snapshots set it)
    this.ws = null;
    this.backoff = 1000;
    this.stopped = false;
    this.timer = null;
  }

  start() {
    this.connect();
  }

  stop() {
    this.stopped = true;
    clearInterval(this.timer);
    this.ws?.close();
  }

  connect() {
    if (this.stopped) return;
    const url = `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/ws/market`;
    let ws;
    try {
      ws = new WebSocket(url);
    } catch {
      this.retry('cannot open');
      return;
    }
    this.ws = ws;
    let heard = Date.now();
    ws.onopen = () => {
      this.backoff = 1000;
      const sub = { type: 'subscribe', assets_ids: this.o.assets };
      if (this.seq !== null) sub.last_seq = { [this.o.market]: this.seq };
      ws.send(JSON.stringify(sub));
      this.o.onState(true);
      clearInterval(this.timer);
      this.timer = setInterval(() => {
        if (Date.now() - heard > SILENT_MS) {
          ws.close(4000, 'silent');
          return;
        }
        if (ws.readyState === WebSocket.OPEN) ws.send('PING');
      }, PING_MS);
    };
    ws.onmessage = (e) => {
      heard = Date.now();
      if (typeof e.data !== 'string' || e.data === 'PONG') return;
      let m;
      try {
        m = JSON.parse(e.data);
      } catch {
        return;
      }
      if (m.market !== undefined && m.market !== this.o.market) return;
      if (m.event_type === 'book') {
        this.seq = m.seq;
      } else if (typeof m.seq === 'number') {
        if (this.seq !== null && m.seq <= this.seq) return; // already applied (a resume may repeat)
        if (this.seq !== null && m.seq !== this.seq + 1) {
          ws.close(4001, 'gap');
          return;
        } // resume from this.seq
        this.seq = m.seq;
      }
      this.o.onMessage(m);
    };
    ws.onclose = (e) => {
      clearInterval(this.timer);
      if (this.ws !== ws) return;
      this.ws = null;
      this.retry(e.reason || `closed (${e.code})`);
    };
    ws.onerror = () => {
      /* onclose follows */
    };
  }

  retry(why) {
    this.o.onState(false, why);
    if (this.stopped) return;
    const wait = this.backoff;
    this.backoff = Math.min(30_000, this.backoff * 2);
    setTimeout(() => this.connect(), wait);
  }
}
