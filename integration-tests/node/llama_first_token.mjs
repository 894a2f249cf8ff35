// Loads one GGUF with llama.cpp (node-llama-cpp, CPU build, mmap as by default) and evaluates a fixed 5-token prompt
// to the first generated token; prints {"loadedMs", "firstTokenMs"} counted from this process's start
// (performance.now() is measured from it), for integration-tests/bench/load_time.py.
import {getLlama, LlamaLogLevel} from "node-llama-cpp";
const llama = await getLlama({gpu: false, build: "never", logLevel: LlamaLogLevel.error});
const model = await llama.loadModel({modelPath: process.argv[2]});
const loadedMs = performance.now();
const ctx = await model.createContext({contextSize: 64, batchSize: 64});
const seq = ctx.getSequence();
let first = null;
for await (const t of seq.evaluate([1, 200, 17, 42, 99], {temperature: 0})) {
  first = t;
  break;
}
console.log(JSON.stringify({loadedMs, firstTokenMs: performance.now(), token: first}));
await ctx.dispose();
await model.dispose();
