// Loads each GGUF given on the command line with llama.cpp (node-llama-cpp, CPU build) and prints
// the greedy continuation of a fixed token prompt as one JSON line per file.
import {getLlama, LlamaLogLevel} from "node-llama-cpp";
const llama = await getLlama({gpu: false, build: "never", logLevel: LlamaLogLevel.error});
for (const p of process.argv.slice(2)) {
  const model = await llama.loadModel({modelPath: p});
  const ctx = await model.createContext({contextSize: 64, batchSize: 64});
  const seq = ctx.getSequence();
  const out = [];
  for await (const t of seq.evaluate([1, 200, 17, 42, 99], {temperature: 0})) {
    out.push(t);
    if (out.length === 12) break;
  }
  console.log(JSON.stringify({file: p, tokens: out}));
  await ctx.dispose();
  await model.dispose();
}
