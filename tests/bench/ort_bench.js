#!/usr/bin/env node
// Times one model on ONNX Runtime (npm onnxruntime-node, CPU EP) for the
// Weir benchmark: graphOptimizationLevel "all", intraOpNumThreads = --threads,
// interOpNumThreads 1, sequential execution. Warms up for --warmup-s seconds
// (at least 2 runs), then times --runs calls of session.run and prints one
// JSON line: {"median_ms", "runs", "min_ms", "session_ms", "version"}.
// With --out-dir it writes each output as OUTPUT_NAME.npy.
//
// usage: node ort_bench.js --model M.onnx [--input NAME=FILE.npy ...]
//          [--threads 1] [--runs 20] [--warmup-s 1] [--out-dir DIR]
// onnxruntime-node is found through NODE_PATH (bench.py sets it).
'use strict';

const fs = require('fs');
const path = require('path');
const ort = require('onnxruntime-node');

// --- .npy (format 1.0-3.0, little-endian, C order) ---------------------------

const NPY_TYPES = {
  '<f4': ['float32', Float32Array],
  '<f8': ['float64', Float64Array],
  '<i8': ['int64', BigInt64Array],
  '<i4': ['int32', Int32Array],
  '|b1': ['bool', Uint8Array],
  '|u1': ['uint8', Uint8Array],
};

function readNpy(file) {
  const buf = fs.readFileSync(file);
  if (buf.toString('latin1', 0, 6) !== '\x93NUMPY') throw new Error(`${file}: not a .npy file`);
  const major = buf[6];
  const headerLen = major === 1 ? buf.readUInt16LE(8) : buf.readUInt32LE(8);
  const start = major === 1 ? 10 : 12;
  const header = buf.toString('latin1', start, start + headerLen);
  const descr = /'descr':\s*'([^']+)'/.exec(header)[1];
  const shape = /'shape':\s*\(([^)]*)\)/.exec(header)[1]
    .split(',').map((s) => s.trim()).filter((s) => s).map(Number);
  if (/'fortran_order':\s*True/.test(header)) throw new Error(`${file}: Fortran order`);
  if (!NPY_TYPES[descr]) throw new Error(`${file}: unsupported dtype ${descr}`);
  const [type, Array_] = NPY_TYPES[descr];
  const body = buf.subarray(start + headerLen);
  // Copy into an aligned buffer: typed arrays need element alignment.
  const aligned = new Uint8Array(body.length);
  aligned.set(body);
  let data = new Array_(aligned.buffer, 0, body.length / Array_.BYTES_PER_ELEMENT);
  if (type === 'bool') data = Uint8Array.from(data); // onnxruntime takes bool as Uint8Array
  return new ort.Tensor(type, data, shape);
}

function writeNpy(file, tensor) {
  const entry = Object.entries(NPY_TYPES).find(([, [type]]) => type === tensor.type);
  if (!entry) throw new Error(`cannot write ${tensor.type} output to .npy`);
  const dims = tensor.dims.map(String);
  const shape = dims.length === 1 ? `(${dims[0]},)` : `(${dims.join(', ')})`;
  let header = `{'descr': '${entry[0]}', 'fortran_order': False, 'shape': ${shape}, }`;
  // Magic (6) + version (2) + length (2) + header + '\n' is a multiple of 64.
  header += ' '.repeat(63 - ((10 + header.length) % 64)) + '\n';
  const prefix = Buffer.alloc(10);
  prefix.write('\x93NUMPY', 0, 'latin1');
  prefix[6] = 1;
  prefix[7] = 0;
  prefix.writeUInt16LE(header.length, 8);
  const data = tensor.data;
  const body = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  fs.writeFileSync(file, Buffer.concat([prefix, Buffer.from(header, 'latin1'), body]));
}

// --- arguments ---------------------------------------------------------------

function parseArgs(argv) {
  const args = { inputs: {}, threads: 1, runs: 20, warmupS: 1, outDir: null, model: null };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const value = () => {
      if (i + 1 >= argv.length) throw new Error(`${a} needs a value`);
      return argv[++i];
    };
    if (a === '--model') args.model = value();
    else if (a === '--input') {
      const [name, file] = value().split('=');
      args.inputs[name] = file;
    } else if (a === '--threads') args.threads = Number(value());
    else if (a === '--runs') args.runs = Number(value());
    else if (a === '--warmup-s') args.warmupS = Number(value());
    else if (a === '--out-dir') args.outDir = value();
    else throw new Error(`unknown argument ${a}`);
  }
  if (!args.model) throw new Error('--model is required');
  return args;
}

// --- timing ------------------------------------------------------------------

const nowMs = () => Number(process.hrtime.bigint()) / 1e6;

function median(values) {
  const s = [...values].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const t0 = nowMs();
  const session = await ort.InferenceSession.create(args.model, {
    executionProviders: ['cpu'],
    graphOptimizationLevel: 'all',
    intraOpNumThreads: args.threads,
    interOpNumThreads: 1,
    executionMode: 'sequential',
  });
  const sessionMs = nowMs() - t0;

  const feeds = {};
  for (const name of session.inputNames) {
    if (!args.inputs[name]) throw new Error(`no --input for model input '${name}'`);
    feeds[name] = readNpy(args.inputs[name]);
  }

  let outputs;
  const warmupEnd = nowMs() + args.warmupS * 1000;
  for (let i = 0; i < 2 || nowMs() < warmupEnd; i++) outputs = await session.run(feeds);

  const times = [];
  for (let i = 0; i < args.runs; i++) {
    const start = nowMs();
    outputs = await session.run(feeds);
    times.push(nowMs() - start);
  }

  if (args.outDir) {
    fs.mkdirSync(args.outDir, { recursive: true });
    for (const name of session.outputNames) writeNpy(path.join(args.outDir, `${name}.npy`), outputs[name]);
  }
  const version = require('onnxruntime-node/package.json').version;
  console.log(JSON.stringify({
    median_ms: median(times), min_ms: Math.min(...times), runs: times.length,
    session_ms: sessionMs, threads: args.threads, version,
  }));
}

main().catch((e) => {
  console.error(`ort_bench: ${e.message}`);
  process.exit(1);
});
