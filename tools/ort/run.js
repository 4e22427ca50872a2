#!/usr/bin/env node
// Runs an ONNX model in ONNX Runtime (onnxruntime-node).
//
//   node run.js MODEL.onnx [--in NAME=FILE.npy ...] [--out DIR] [--bench N]
//
// Inputs are .npy files bound by name (or, with a bare FILE.npy, by
// position). Outputs are written to DIR/<index>.npy. A JSON summary goes to
// stdout: output names, dtypes, shapes and (with --bench N) the median
// latency of N runs in milliseconds.
'use strict';

const fs = require('fs');
const path = require('path');
const ort = require('onnxruntime-node');

const NPY_TO_ORT = {
  '<f4': ['float32', Float32Array], '<f8': ['float64', Float64Array], '<f2': ['float16', Uint16Array],
  '<i8': ['int64', BigInt64Array], '<i4': ['int32', Int32Array], '<i2': ['int16', Int16Array],
  '|i1': ['int8', Int8Array], '|u1': ['uint8', Uint8Array], '|b1': ['bool', Uint8Array],
  '<u8': ['uint64', BigUint64Array], '<u4': ['uint32', Uint32Array], '<u2': ['uint16', Uint16Array],
};
const ORT_TO_NPY = {};
for (const [descr, [type]] of Object.entries(NPY_TO_ORT)) ORT_TO_NPY[type] = descr;

function readNpy(file) {
  const buf = fs.readFileSync(file);
  if (buf.slice(0, 6).toString('latin1') !== '\x93NUMPY') throw new Error(`${file}: not a .npy file`);
  const major = buf[6];
  const headerLen = major === 1 ? buf.readUInt16LE(8) : buf.readUInt32LE(8);
  const offset = major === 1 ? 10 : 12;
  const header = buf.slice(offset, offset + headerLen).toString('latin1');
  const descr = /'descr':\s*'([^']+)'/.exec(header)[1];
  const shapeText = /'shape':\s*\(([^)]*)\)/.exec(header)[1];
  const dims = shapeText.split(',').map((s) => s.trim()).filter((s) => s.length).map(Number);
  if (/'fortran_order':\s*True/.test(header)) throw new Error(`${file}: Fortran order is not supported`);
  const entry = NPY_TO_ORT[descr];
  if (!entry) throw new Error(`${file}: unsupported dtype ${descr}`);
  const [type, Ctor] = entry;
  const start = offset + headerLen;
  const bytes = buf.buffer.slice(buf.byteOffset + start, buf.byteOffset + buf.length);
  let data = new Ctor(bytes.slice(0));
  if (type === 'bool') data = Uint8Array.from(data, (v) => (v ? 1 : 0));
  return new ort.Tensor(type, data, dims);
}

function writeNpy(file, tensor) {
  const descr = ORT_TO_NPY[tensor.type];
  if (!descr) throw new Error(`cannot write output of type ${tensor.type}`);
  const shape = tensor.dims.length === 1 ? `(${tensor.dims[0]},)` : `(${tensor.dims.join(', ')})`;
  let header = `{'descr': '${descr}', 'fortran_order': False, 'shape': ${shape}, }`;
  const pad = 64 - ((10 + header.length + 1) % 64);
  header += ' '.repeat(pad % 64) + '\n';
  const head = Buffer.alloc(10);
  head.write('\x93NUMPY', 0, 'latin1');
  head[6] = 1;
  head[7] = 0;
  head.writeUInt16LE(header.length, 8);
  const data = tensor.data;
  const body = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  fs.writeFileSync(file, Buffer.concat([head, Buffer.from(header, 'latin1'), body]));
}

// --batch JOBS.json: [{"model": path, "inputs": [npy paths], "out": dir}, ...]
// Runs every job; prints one JSON line per job: {"ok": true, "outputs": [...]}
// or {"ok": false, "error": "..."}.
async function batch(file) {
  const jobs = JSON.parse(fs.readFileSync(file, 'utf8'));
  for (const job of jobs) {
    try {
      const session = await ort.InferenceSession.create(job.model, { graphOptimizationLevel: 'all' });
      const feeds = {};
      session.inputNames.forEach((name, k) => {
        if (k < job.inputs.length) feeds[name] = readNpy(job.inputs[k]);
      });
      const missing = session.inputNames.filter((n) => !(n in feeds));
      if (missing.length) throw new Error(`no value for model input(s): ${missing.join(', ')}`);
      const results = await session.run(feeds);
      const outputs = [];
      session.outputNames.forEach((name, k) => {
        const t = results[name];
        outputs.push({ name, type: t.type, dims: t.dims });
        writeNpy(path.join(job.out, `${k}.npy`), t);
      });
      process.stdout.write(JSON.stringify({ ok: true, outputs }) + '\n');
    } catch (e) {
      process.stdout.write(JSON.stringify({ ok: false, error: String(e.message || e) }) + '\n');
    }
  }
}

async function main() {
  const argv = process.argv.slice(2);
  if (argv[0] === '--batch') return batch(argv[1]);
  if (!argv.length) {
    console.error('usage: run.js MODEL.onnx [--in NAME=FILE.npy ...] [--out DIR] [--bench N]');
    process.exit(2);
  }
  const model = argv[0];
  const named = {};
  const positional = [];
  let outDir = null;
  let bench = 0;
  for (let i = 1; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--in') {
      const spec = argv[++i];
      const eq = spec.indexOf('=');
      if (eq > 0) named[spec.slice(0, eq)] = readNpy(spec.slice(eq + 1));
      else positional.push(readNpy(spec));
    } else if (a === '--out') {
      outDir = argv[++i];
    } else if (a === '--bench') {
      bench = Number(argv[++i]);
    } else {
      throw new Error(`unknown argument ${a}`);
    }
  }
  const session = await ort.InferenceSession.create(model, { graphOptimizationLevel: 'all' });
  const feeds = { ...named };
  session.inputNames.forEach((name, k) => {
    if (!(name in feeds) && k < positional.length) feeds[name] = positional[k];
  });
  const missing = session.inputNames.filter((n) => !(n in feeds));
  if (missing.length) throw new Error(`no value for model input(s): ${missing.join(', ')}`);
  const results = await session.run(feeds);
  const summary = { outputs: [] };
  session.outputNames.forEach((name, k) => {
    const t = results[name];
    summary.outputs.push({ name, type: t.type, dims: t.dims });
    if (outDir) writeNpy(path.join(outDir, `${k}.npy`), t);
  });
  if (bench > 0) {
    const times = [];
    for (let i = 0; i < bench; i++) {
      const t0 = process.hrtime.bigint();
      await session.run(feeds);
      times.push(Number(process.hrtime.bigint() - t0) / 1e6);
    }
    times.sort((a, b) => a - b);
    summary.latency_ms = times[Math.floor(times.length / 2)];
  }
  process.stdout.write(JSON.stringify(summary) + '\n');
}

main().catch((e) => {
  console.error(`ort run failed: ${e.message}`);
  process.exit(1);
});
