type T = {a: number};
let x: T = {a: 1} as T;
return x.a / 2 / 1;
