// The array guard (docs/codemode.md, "What the deadline ends"). QuickJS-NG's
// generic Array.prototype built-ins (join, reverse, splice, sort, fill...)
// walk `0..length` of their receiver in native code without polling the
// interrupt, so `[].join.call({length: 2 ** 53 - 1})` would never end. This
// module replaces those built-ins, before the script runs, with wrappers
// that keep every such walk bounded or interruptible:
// - the receiver's length (read once) over `maxLength` (what the memory
//   limit could hold as a dense array) is a RangeError;
// - a genuine Array with the standard prototype chain is handed to the
//   built-in as is (its length is a data property the built-in reads once);
// - anything else (array-likes, proxies, typed arrays) is handed over behind
//   a proxy whose traps are script functions: every element access then
//   passes through the interpreter, which polls the interrupt;
// - `sort`/`toSorted` without a comparator get a script comparator with the
//   default order, which asks the host whether the deadline has passed
//   before comparing long texts (one native comparison of two long strings
//   is milliseconds of work, and the engine checks its interrupt only once
//   per ten thousand calls);
// - `flat`, `flatMap` and `concat` (which walk nested or several arrays) are
//   written here as script loops; `concat` of normal arrays within the
//   bound uses the built-in over fresh copies.
// Nothing new is visible to scripts: the wrappers have the built-ins' names
// and lengths and are installed as the same non-enumerable properties.
function guardArrays(host) {
  const AP = Array.prototype;
  const OP = Object.prototype;
  const Obj = Object;
  const getProto = Object.getPrototypeOf;
  const defineProp = Object.defineProperty;
  const isArray = Array.isArray;
  const apply = Reflect.apply;
  const rGet = Reflect.get;
  const rSet = Reflect.set;
  const rHas = Reflect.has;
  const rDelete = Reflect.deleteProperty;
  const rDefine = Reflect.defineProperty;
  const rDesc = Reflect.getOwnPropertyDescriptor;
  const P = Proxy;
  const RE = RangeError;
  const TE = TypeError;
  const trunc = Math.trunc;
  const spreadable = Symbol.isConcatSpreadable;
  const plainArray = host.plainArray;
  const maxLen = host.maxLength;
  const MAX_SAFE = 9007199254740991;
  const origSlice = AP.slice;
  const origConcat = AP.concat;
  const hasOwn = Object.hasOwn;
  const ArrayCtor = Array;
  const speciesSym = Symbol.species;
  const speciesGetter = Reflect.getOwnPropertyDescriptor(Array, Symbol.species).get;

  function toLength(v) {
    const n = +v;
    if (!(n > 0)) return 0;
    return n >= MAX_SAFE ? MAX_SAFE : trunc(n);
  }
  function toInteger(v) {
    const n = +v;
    return n !== n ? 0 : trunc(n);
  }
  function toObject(v, name) {
    if (v === null || v === undefined) {
      throw new TE(`Array.prototype.${name} called on null or undefined`);
    }
    return Obj(v);
  }
  function isObject(v) {
    return (typeof v === "object" && v !== null) || typeof v === "function";
  }
  function checkLength(name, len) {
    if (len > maxLen) {
      throw new RE(
        `Array.prototype.${name}: length ${len} is over the ${maxLen} elements the memory limit allows`,
      );
    }
  }
  // A genuine Array (no proxy) whose prototype chain is the standard one.
  function normal(o) {
    return plainArray(o) && getProto(o) === AP && getProto(AP) === OP;
  }
  function createData(target, key, value) {
    defineProp(target, key, {
      __proto__: null,
      value,
      writable: true,
      enumerable: true,
      configurable: true,
    });
  }
  // `o` behind script-function traps; `length` frozen at what was checked.
  function snapshot(o, len, raw) {
    const shown = isObject(raw) ? len : raw;
    let proxy;
    const handler = {
      __proto__: null,
      get(t, k, r) {
        return k === "length" ? shown : rGet(t, k, r === proxy ? t : r);
      },
      set(t, k, v, r) {
        return rSet(t, k, v, r === proxy ? t : r);
      },
      has(t, k) {
        return rHas(t, k);
      },
      deleteProperty(t, k) {
        return rDelete(t, k);
      },
      defineProperty(t, k, d) {
        return rDefine(t, k, d);
      },
      getOwnPropertyDescriptor(t, k) {
        return rDesc(t, k);
      },
    };
    proxy = new P(o, handler);
    return proxy;
  }
  const poll = host.poll;
  function defaultCompare(x, y) {
    const a = `${x}`;
    const b = `${y}`;
    if (a.length + b.length > 4096) poll();
    return a < b ? -1 : b < a ? 1 : 0;
  }
  function install(name, fn, length) {
    defineProp(fn, "length", { value: length });
    defineProp(AP, name, {
      value: fn,
      writable: true,
      enumerable: false,
      configurable: true,
    });
  }

  function guard(name) {
    const orig = AP[name];
    if (typeof orig !== "function") return;
    const sorts = name === "sort" || name === "toSorted";
    const wrapped = {
      [name](...args) {
        const o = this;
        if (!isObject(o)) return apply(orig, o, args);
        const raw = o.length;
        const len = toLength(raw);
        checkLength(name, len);
        // The native default order never polls: 65 536 strings of 16 MiB
        // each took minutes (attack F6). Sort with the script comparator.
        if (sorts && args[0] === undefined) args[0] = defaultCompare;
        if (normal(o)) return apply(orig, o, args);
        const p = snapshot(o, len, raw);
        const res = apply(orig, p, args);
        return res === p ? o : res;
      },
    }[name];
    install(name, wrapped, orig.length);
  }
  const guarded = [
    "copyWithin", "fill", "join", "toLocaleString", "reverse", "shift",
    "unshift", "slice", "splice", "sort", "toReversed", "toSorted",
    "toSpliced", "with",
  ];
  for (let i = 0; i < guarded.length; i++) guard(guarded[i]);

  // An empty array made the way the built-in would (species included).
  function speciesEmpty(o) {
    return apply(origSlice, o, [0, 0]);
  }
  function flatten(target, source, sourceLen, start, depth, mapper, thisArg) {
    let t = start;
    for (let i = 0; i < sourceLen; i++) {
      if (!(i in source)) continue;
      let el = source[i];
      if (mapper !== undefined) el = apply(mapper, thisArg, [el, i, source]);
      if (depth > 0 && isArray(el)) {
        t = flatten(target, el, toLength(el.length), t, depth - 1);
      } else {
        if (t >= MAX_SAFE) throw new TE("array too long");
        createData(target, t, el);
        t++;
      }
    }
    return t;
  }
  // No script runs in here: `e` is a genuine array and the descriptors
  // are read from ordinary objects.
  function speciesIsArray(e) {
    if (hasOwn(e, "constructor")) return false;
    const ctor = rDesc(AP, "constructor");
    const species = rDesc(ArrayCtor, speciesSym);
    return !!ctor && ctor.value === ArrayCtor && !!species && species.get === speciesGetter;
  }
  // The built-in concat over fresh copies, when the receiver and every
  // object item are normal arrays whose total length is within the bound.
  // Each copy is made by the built-in slice while the species is `Array`,
  // so it is a new array no script holds; script code the built-in concat
  // may still run (getters for holes on the prototypes) only ever sees the
  // copy being walked, whose length was already read. Undefined when the
  // fast path does not apply.
  function fastConcat(o, items) {
    if (!normal(o) || hasOwn(o, spreadable)) return undefined;
    let total = o.length;
    for (let i = 0; i < items.length; i++) {
      const e = items[i];
      if (!isObject(e)) continue;
      if (!normal(e) || hasOwn(e, spreadable)) return undefined;
      total += e.length;
    }
    if (total > maxLen || hasOwn(AP, spreadable) || hasOwn(OP, spreadable)) return undefined;
    const copies = [];
    total = 0;
    for (let i = -1; i < items.length; i++) {
      const e = i < 0 ? o : items[i];
      let c = e;
      if (isObject(e)) {
        // Getters run by earlier copies may have changed `e`.
        if (!normal(e) || hasOwn(e, spreadable) || !speciesIsArray(e)) {
          throw new TE("Array.prototype.concat: an array changed while being concatenated");
        }
        checkLength("concat", e.length);
        c = apply(origSlice, e, []);
        total += c.length;
      }
      createData(copies, i + 1, c);
    }
    checkLength("concat", total);
    if (hasOwn(AP, spreadable) || hasOwn(OP, spreadable) || !speciesIsArray(copies[0])) {
      throw new TE("Array.prototype.concat: an array changed while being concatenated");
    }
    return apply(origConcat, copies[0], apply(origSlice, copies, [1]));
  }
  const methods = {
    flat(depth) {
      const o = toObject(this, "flat");
      const len = toLength(o.length);
      let d = 1;
      if (depth !== undefined) {
        d = toInteger(depth);
        if (d < 0) d = 0;
      }
      const a = speciesEmpty(o);
      flatten(a, o, len, 0, d);
      return a;
    },
    flatMap(mapper, thisArg) {
      const o = toObject(this, "flatMap");
      const len = toLength(o.length);
      if (typeof mapper !== "function") {
        throw new TE("Array.prototype.flatMap: mapper is not a function");
      }
      const a = speciesEmpty(o);
      flatten(a, o, len, 0, 1, mapper, thisArg);
      return a;
    },
    concat(...items) {
      const fast = fastConcat(this, items);
      if (fast !== undefined) return fast;
      const o = toObject(this, "concat");
      const a = speciesEmpty(o);
      let n = 0;
      for (let i = -1; i < items.length; i++) {
        const e = i < 0 ? o : items[i];
        let spread = false;
        if (isObject(e)) {
          const s = e[spreadable];
          spread = s !== undefined ? !!s : isArray(e);
        }
        if (spread) {
          const len = toLength(e.length);
          if (n + len > MAX_SAFE) throw new TE("array too long");
          for (let k = 0; k < len; k++, n++) {
            if (k in e) createData(a, n, e[k]);
          }
        } else {
          if (n >= MAX_SAFE) throw new TE("array too long");
          createData(a, n, e);
          n++;
        }
      }
      a.length = n;
      return a;
    },
  };
  install("flat", methods.flat, 0);
  install("flatMap", methods.flatMap, 1);
  install("concat", methods.concat, 1);
}
