const r = await tools.s.t({a: 1});
return r.x?.y ?? [1, `t${2}`, /re/g];
