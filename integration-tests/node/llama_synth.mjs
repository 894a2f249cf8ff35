// llama.cpp (node-llama-cpp, CPU build) as the client of synthesized GGUF files: for each job of the
// JSON file given as argv[2] ([{file, texts, specialTexts, prompt, n, embed}]) loads the file, tokenizes every text
// (no special tokens, no BOS) and every special text (special tokens parsed, as llama.cpp reads a prompt),
// reads the chat template and the tokenizer.* metadata, and continues the prompt greedily for at most n tokens
// (node-llama-cpp stops early at an end-of-generation token).
// With embed set, computes the embedding of every text instead (node-llama-cpp's embedding context).
// Prints one JSON line per job: {file, tokenized, tokenizedSpecial, chatTemplate, tokens}, {file, tokenized, embeddings}
// or {file, error}.
import {readFileSync} from "node:fs";
import {getLlama, LlamaLogLevel} from "node-llama-cpp";
const jobs = JSON.parse(readFileSync(process.argv[2], "utf8"));
const llama = await getLlama({gpu: false, build: "never", logLevel: LlamaLogLevel.error});
for (const job of jobs) {
  try {
    const model = await llama.loadModel({modelPath: job.file});
    const tokenized = job.texts.map(t => Array.from(model.tokenize(t, false)));
    const tokenizedSpecial = (job.specialTexts ?? []).map(t => Array.from(model.tokenize(t, true)));
    const chatTemplate = model.fileInfo.metadata?.tokenizer?.chat_template ?? null;
    if (job.embed) {   // an embedding model: the pooled (and projected) embedding of every text instead of a continuation
      const ectx = await model.createEmbeddingContext({contextSize: 64, batchSize: 64, threads: 1});
      const embeddings = [];
      for (const t of job.texts) embeddings.push(Array.from((await ectx.getEmbeddingFor(t)).vector));
      console.log(JSON.stringify({file: job.file, tokenized, embeddings}));
      await ectx.dispose();
      await model.dispose();
      continue;
    }
    const ctx = await model.createContext({contextSize: 64, batchSize: 64, threads: 1});
    const seq = ctx.getSequence();
    const tokens = [];
    for await (const t of seq.evaluate(job.prompt, {temperature: 0})) {
      tokens.push(t);
      if (tokens.length === job.n) break;
    }
    console.log(JSON.stringify({file: job.file, tokenized, tokenizedSpecial, chatTemplate, tokens}));
    await ctx.dispose();
    await model.dispose();
  } catch (e) {
    console.log(JSON.stringify({file: job.file, error: String(e && e.message || e)}));
  }
}
