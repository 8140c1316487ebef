// count.mjs reads a JSON array of strings on stdin and writes the number
// of o200k_base tokens of each, by js-tiktoken, as a JSON array. The
// js-tiktoken package directory is in $TOOLC_JS_TIKTOKEN.
import { createRequire } from "node:module";
import { readFileSync } from "node:fs";

const require = createRequire(import.meta.url);
const { getEncoding } = require(process.env.TOOLC_JS_TIKTOKEN);
const enc = getEncoding("o200k_base");
const texts = JSON.parse(readFileSync(0, "utf8"));
process.stdout.write(JSON.stringify(texts.map((t) => enc.encode(t).length)));
