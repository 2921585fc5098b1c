// The engine's own prelude: runs once before the user's script, in the
// script's context, and defines the frozen global `skarn`. It captures what
// it needs first, so later tampering with globals or prototypes by the
// script cannot change what `skarn` does. `host` holds native functions.
// `guardArrays` and `guardNatives` come from array_guard.js and
// native_guard.js, compiled into the same module.
export default function (host) {
  guardArrays(host);
  guardNatives(host);
  const P = Proxy;
  const freeze = Object.freeze;
  const create = Object.create;
  const define = Object.defineProperty;
  const call = host.call;
  const list = host.list;
  const read = host.read;
  const log = host.log;
  const TE = TypeError;

  const refuse = function () {
    return false;
  };

  function server(name) {
    if (typeof name !== "string") {
      throw new TE("skarn.server(name): name must be a string");
    }
    const handler = freeze({
      __proto__: null,
      get(_target, tool) {
        // `then` stays undefined so that `await skarn.server(x)` works; a
        // tool named "then" is reachable through skarn.callTool.
        if (typeof tool !== "string" || tool === "then") return undefined;
        return function (args) {
          return call(name, tool, args);
        };
      },
      set: refuse,
      defineProperty: refuse,
      deleteProperty: refuse,
      setPrototypeOf: refuse,
    });
    return new P(freeze(create(null)), handler);
  }

  const skarn = create(null);
  define(skarn, "callTool", {
    value: function callTool(server, tool, args) {
      return call(server, tool, args);
    },
    enumerable: true,
  });
  define(skarn, "server", { value: server, enumerable: true });
  define(skarn, "listTools", {
    value: function listTools() {
      return list();
    },
    enumerable: true,
  });
  define(skarn, "readResource", {
    value: function readResource(server, uri) {
      return read(server, uri);
    },
    enumerable: true,
  });
  define(skarn, "log", { value: log, enumerable: true });
  freeze(skarn);
  define(globalThis, "skarn", {
    value: skarn,
    writable: false,
    enumerable: false,
    configurable: false,
  });
}
