// The Node-RED floor: a node that does nothing but send the same body with undici's pool.
// Whatever a node package adds sits on top of what this one costs. Nodes sending to one origin
// share one pool with the package's pool settings (as the package's nodes share their account's),
// so the gap between the two is code, not configuration.
const { Pool } = require('undici');

const pools = new Map();
function poolFor(origin) {
  let entry = pools.get(origin);
  if (!entry) {
    entry = { pool: new Pool(origin, { connections: 32, pipelining: 1, keepAliveTimeout: 10_000 }), users: 0 };
    pools.set(origin, entry);
  }
  entry.users++;
  return entry;
}

module.exports = function (RED) {
  function BenchUndici(config) {
    RED.nodes.createNode(this, config);
    const url = new URL(config.url);
    const entry = poolFor(url.origin);
    const body = JSON.stringify(config.body);
    this.on('input', (msg, send, done) => {
      entry.pool
        .request({ path: url.pathname, method: 'POST', headers: { 'content-type': 'application/json' }, body })
        .then((res) => res.body.json())
        .then((answer) => {
          msg.payload = answer.data;
          send(msg);
          done();
        }, done);
    });
    this.on('close', (done) => {
      if (--entry.users > 0) return done();
      pools.delete(url.origin);
      entry.pool.close().then(
        () => done(),
        () => done(),
      );
    });
  }
  RED.nodes.registerType('bench-undici', BenchUndici);
};
