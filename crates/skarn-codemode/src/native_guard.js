// The native-loop guard (docs/codemode.md, "What the deadline ends"), next
// to the array guard. QuickJS-NG polls the interrupt when it calls a
// function, but its native loops over built-in iterators skip the call: an
// iterator whose `next` is the built-in one is stepped directly in C
// (`JS_IteratorNext2`'s fast path), so `[].values.call({length: 2 ** 53 - 1})
// .drop(2 ** 52).next()`, `new Set().union({... keys() { return
// sparse.values() }})` and the like never reach a check. Its string search
// is quadratic and does not poll either, nor does its regexp engine
// between backtracking points. Before the script runs this module:
// - gives every built-in iterator prototype (arrays, strings, maps, sets,
//   regexp matches, iterator helpers, wrapped iterators) a `next` that is a
//   script function calling the built-in one: every native consumer (the
//   iterator helpers, `Array.from`, spread, `Set` methods, `Promise.all`,
//   `Map`/`Set` constructors...) now makes a real call per step, which
//   polls the deadline;
// - runs `indexOf`, `lastIndexOf`, `includes`, `split`, `replace` and
//   `replaceAll` of a string pattern over a long string, when the length of
//   the string times that of the pattern is over `PAIR_BUDGET`, as a script
//   loop over windows searched natively (each window costs at most about
//   `PAIR_BUDGET` comparisons, and the loop asks the host between windows
//   whether the deadline has passed: each window's slice and search are
//   native work the interpreter's own count of steps does not see);
// - refuses (RangeError) to run a regexp whose source is longer than
//   `MAX_REGEXP_SOURCE` characters: the engine polls only once per ten
//   thousand backtracking points, and each of those may compare the whole
//   pattern.
// Names, lengths and property attributes of the replaced built-ins are kept.
function guardNatives(host) {
  const poll = host.poll;
  const getProto = Object.getPrototypeOf;
  const defineProp = Object.defineProperty;
  const rDesc = Reflect.getOwnPropertyDescriptor;
  const apply = Reflect.apply;
  const TE = TypeError;
  const RE = RangeError;
  const trunc = Math.trunc;
  const max = Math.max;
  const min = Math.min;
  const SP = String.prototype;
  const RP = RegExp.prototype;
  const matchSym = Symbol.match;
  const replaceSym = Symbol.replace;
  const splitSym = Symbol.split;
  const PAIR_BUDGET = 1 << 22;
  const MAX_REGEXP_SOURCE = 1 << 14;

  function replaceMethod(obj, name, fn) {
    const d = rDesc(obj, name);
    defineProp(fn, "name", { value: name });
    defineProp(fn, "length", { value: d.value.length });
    defineProp(obj, name, {
      value: fn,
      writable: d.writable,
      enumerable: d.enumerable,
      configurable: d.configurable,
    });
  }

  // Iterators.
  const iterProtos = [
    getProto([][Symbol.iterator]()),
    getProto(""[Symbol.iterator]()),
    getProto(new Map()[Symbol.iterator]()),
    getProto(new Set()[Symbol.iterator]()),
    getProto(/a/g[Symbol.matchAll]("")),
  ];
  if (typeof Iterator === "function") {
    iterProtos.push(getProto([].values().drop(0)));
    iterProtos.push(getProto(Iterator.from({ next() {} })));
  }
  for (let i = 0; i < iterProtos.length; i++) {
    const p = iterProtos[i];
    const d = rDesc(p, "next");
    if (!d || typeof d.value !== "function") continue;
    const orig = d.value;
    replaceMethod(p, "next", {
      next() {
        return apply(orig, this, []);
      },
    }.next);
  }

  // Strings.
  const origIndexOf = SP.indexOf;
  const origLastIndexOf = SP.lastIndexOf;
  const origIncludes = SP.includes;
  const origSplit = SP.split;
  const origReplace = SP.replace;
  const origReplaceAll = SP.replaceAll;
  const origSlice = SP.slice;
  const sourceGetter = rDesc(RP, "source").get;

  // ToString without copying a string (a template literal would).
  function toStr(v) {
    return typeof v === "string" ? v : `${v}`;
  }
  function str(v, name) {
    if (v === null || v === undefined) {
      throw new TE(`String.prototype.${name} called on null or undefined`);
    }
    return toStr(v);
  }
  function toInt(v) {
    const n = +v;
    return n !== n ? 0 : trunc(n);
  }
  function isObject(v) {
    return (typeof v === "object" && v !== null) || typeof v === "function";
  }
  function isRegExp(v) {
    if (!isObject(v)) return false;
    const m = v[matchSym];
    if (m !== undefined) return !!m;
    try {
      apply(sourceGetter, v, []);
      return v !== RP;
    } catch {
      return false;
    }
  }
  function slice(s, a, b) {
    return apply(origSlice, s, [a, b]);
  }
  function big(s, t) {
    return s.length * t.length > PAIR_BUDGET;
  }
  // Windows of candidate positions: small first (a match nearby costs
  // little), doubling up to what keeps one native search within budget.
  function firstWindow(m) {
    return min(max(1, trunc(PAIR_BUDGET / m)), max(1024, 4 * m));
  }
  // First index >= from of `t` in `s`, searching windows natively.
  function indexFrom(s, t, from) {
    const n = s.length;
    const m = t.length;
    if (m === 0) return min(from, n);
    const most = max(1, trunc(PAIR_BUDGET / m));
    let w = firstWindow(m);
    for (let i = from; i + m <= n; i += w, w = min(most, w * 2)) {
      poll();
      const k = apply(origIndexOf, slice(s, i, i + w + m - 1), [t]);
      if (k >= 0) return i + k;
    }
    return -1;
  }
  // Last index <= from of `t` in `s`.
  function lastIndexFrom(s, t, from) {
    const m = t.length;
    if (m === 0) return min(from, s.length);
    const most = max(1, trunc(PAIR_BUDGET / m));
    let w = firstWindow(m);
    let hi = min(from, s.length - m);
    while (hi >= 0) {
      poll();
      const lo = max(0, hi - w + 1);
      const k = apply(origLastIndexOf, slice(s, lo, hi + m), [t]);
      if (k >= 0) return lo + k;
      hi = lo - 1;
      w = min(most, w * 2);
    }
    return -1;
  }

  const strMethods = {
    indexOf(search, position) {
      const s = str(this, "indexOf");
      const t = toStr(search);
      const pos = min(max(toInt(position), 0), s.length);
      if (!big(s, t)) return apply(origIndexOf, s, [t, pos]);
      return indexFrom(s, t, pos);
    },
    lastIndexOf(search, position) {
      const s = str(this, "lastIndexOf");
      const t = toStr(search);
      const n = +position;
      const pos = n !== n ? Infinity : trunc(n);
      if (!big(s, t)) return apply(origLastIndexOf, s, [t, pos]);
      return lastIndexFrom(s, t, min(max(pos, 0), s.length));
    },
    includes(search, position) {
      const s = str(this, "includes");
      if (isRegExp(search)) {
        throw new TE("String.prototype.includes: the search string must not be a regular expression");
      }
      const t = toStr(search);
      const pos = min(max(toInt(position), 0), s.length);
      if (!big(s, t)) return apply(origIncludes, s, [t, pos]);
      return indexFrom(s, t, pos) >= 0;
    },
    split(separator, limit) {
      if (this === null || this === undefined) {
        throw new TE("String.prototype.split called on null or undefined");
      }
      if (isObject(separator) && separator[splitSym] != null) {
        return apply(origSplit, this, [separator, limit]);
      }
      const s = str(this, "split");
      const lim = limit === undefined ? 4294967295 : toInt(limit) >>> 0;
      const r = toStr(separator);
      if (separator === undefined || r.length === 0 || !big(s, r)) {
        return apply(origSplit, s, [separator === undefined ? undefined : r, lim]);
      }
      const out = [];
      if (lim === 0) return out;
      let i = 0;
      let j = indexFrom(s, r, 0);
      while (j !== -1) {
        out[out.length] = slice(s, i, j);
        if (out.length === lim) return out;
        i = j + r.length;
        j = indexFrom(s, r, i);
      }
      out[out.length] = slice(s, i, s.length);
      return out;
    },
    replace(search, replacement) {
      if (this === null || this === undefined) {
        throw new TE("String.prototype.replace called on null or undefined");
      }
      if (isObject(search) && search[replaceSym] != null) {
        return apply(origReplace, this, [search, replacement]);
      }
      const s = str(this, "replace");
      const t = toStr(search);
      const fn = typeof replacement === "function";
      const rep = fn ? replacement : toStr(replacement);
      if (!big(s, t)) return apply(origReplace, s, [t, rep]);
      return replaceAt(s, t, rep, fn, false);
    },
    replaceAll(search, replacement) {
      if (this === null || this === undefined) {
        throw new TE("String.prototype.replaceAll called on null or undefined");
      }
      if (isObject(search)) {
        if (isRegExp(search)) {
          const f = `${search.flags}`;
          if (apply(origIndexOf, f, ["g"]) < 0) {
            throw new TE("String.prototype.replaceAll: a regular expression needs the g flag");
          }
        }
        if (search[replaceSym] != null) {
          return apply(origReplaceAll, this, [search, replacement]);
        }
      }
      const s = str(this, "replaceAll");
      const t = toStr(search);
      const fn = typeof replacement === "function";
      const rep = fn ? replacement : toStr(replacement);
      if (!big(s, t)) return apply(origReplaceAll, s, [t, rep]);
      return replaceAt(s, t, rep, fn, true);
    },
  };
  // GetSubstitution for a string pattern (no captures).
  function substitute(matched, s, pos, rep) {
    let out = "";
    let i = 0;
    for (;;) {
      const d = apply(origIndexOf, rep, ["$", i]);
      if (d < 0 || d + 1 >= rep.length) break;
      out += slice(rep, i, d);
      const c = rep[d + 1];
      if (c === "$") out += "$";
      else if (c === "&") out += matched;
      else if (c === "`") out += slice(s, 0, pos);
      else if (c === "'") out += slice(s, pos + matched.length, s.length);
      else out += `$${c}`;
      i = d + 2;
    }
    return out + slice(rep, i, rep.length);
  }
  function replaceAt(s, t, rep, fn, all) {
    const found = [];
    let p = indexFrom(s, t, 0);
    while (p !== -1) {
      found[found.length] = p;
      if (!all) break;
      p = indexFrom(s, t, p + max(1, t.length));
    }
    let out = "";
    let end = 0;
    for (let k = 0; k < found.length; k++) {
      const q = found[k];
      const r = fn ? `${rep(t, q, s)}` : substitute(t, s, q, rep);
      out += slice(s, end, q) + r;
      end = q + t.length;
    }
    return out + slice(s, end, s.length);
  }
  const names = ["indexOf", "lastIndexOf", "includes", "split", "replace", "replaceAll"];
  for (let i = 0; i < names.length; i++) {
    replaceMethod(SP, names[i], strMethods[names[i]]);
  }

  // Regular expressions: every built-in use goes through `exec`.
  const origExec = RP.exec;
  replaceMethod(RP, "exec", {
    exec(s) {
      let src;
      try {
        src = apply(sourceGetter, this, []);
      } catch {
        return apply(origExec, this, [s]);
      }
      if (src.length > MAX_REGEXP_SOURCE) {
        throw new RE(
          `RegExp: a pattern of ${src.length} characters is over the ${MAX_REGEXP_SOURCE} this engine runs (it cannot interrupt one that long)`,
        );
      }
      return apply(origExec, this, [s]);
    },
  }.exec);
}
