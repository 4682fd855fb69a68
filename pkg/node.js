// The package's entry in Node: loads the engine from the file next to this
// one, synchronously, so every function works right after `import`.

import { readFileSync } from "node:fs";
import { initSync } from "./fabricscope.js";

initSync({ module: readFileSync(new URL("./fabricscope_bg.wasm", import.meta.url)) });

export * from "./index.js";
export { default } from "./index.js";
