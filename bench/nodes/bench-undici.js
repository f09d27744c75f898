// The Node-RED floor: a node that does nothing but send the same body with undici's pool.
// Whatever a node package adds sits on top of what this one costs.
const { Pool } = require('undici');

module.exports = function (RED) {
  function BenchUndici(config) {
    RED.nodes.createNode(this, config);
    const url = new URL(config.url);
    const pool = new Pool(url.origin, { connections: 64 });
    const body = JSON.stringify(config.body);
    this.on('input', (msg, send, done) => {
      pool
        .request({ path: url.pathname, method: 'POST', headers: { 'content-type': 'application/json' }, body })
        .then((res) => res.body.json())
        .then((answer) => {
          msg.payload = answer.data;
          send(msg);
          done();
        }, done);
    });
    this.on('close', (done) =>
      pool.close().then(
        () => done(),
        () => done(),
      ),
    );
  }
  RED.nodes.registerType('bench-undici', BenchUndici);
};
