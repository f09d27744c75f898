// The benchmark's output: hands every msg it gets to the benchmark, at no cost worth measuring.
module.exports = function (RED) {
  function BenchSink(config) {
    RED.nodes.createNode(this, config);
    this.on('input', (msg, send, done) => {
      globalThis.benchSink?.(this.id, msg);
      done();
    });
  }
  RED.nodes.registerType('bench-sink', BenchSink);
};
