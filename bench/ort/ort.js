// bench/ort/ort.js: onnxruntime (onnxruntime-node, CPU) side of bench/ort/run.sh.
//   node ort.js calib MODEL.onnx CALIB.npy RANGES.json   min/max of every graph output over the samples
//                                                        (CALIB.npy float32 [S, ...]: one inference per sample)
//   node ort.js bench MODEL.onnx INPUT.npy RUNS OUT.npy  W = max(3, RUNS/10) warm-up runs, then RUNS timed runs
//                                                        on one thread; prints one line; writes output 0
//   node ort.js compare GOT.npy WANT.npy LSB             elements differing, in units of LSB (the output scale)
// Sessions: intraOpNumThreads 1, interOpNumThreads 1, executionMode sequential, graphOptimizationLevel 'all'.
// Timing: wall (process.hrtime) and process CPU time (process.cpuUsage: user + system) around each
// session.run(); medians over the runs. The CPU figure is the steadier one on a shared machine.
'use strict';
const ort = require('onnxruntime-node');
const fs = require('fs');

function readNpy(path) {
  const b = fs.readFileSync(path);
  if (b.toString('latin1', 1, 6) !== 'NUMPY') throw new Error(path + ': not a .npy file');
  const major = b[6];
  const hlen = major === 1 ? b.readUInt16LE(8) : b.readUInt32LE(8);
  const off = (major === 1 ? 10 : 12) + hlen;
  const header = b.toString('latin1', major === 1 ? 10 : 12, off);
  if (!/'descr':\s*'<f4'/.test(header) || /'fortran_order':\s*True/.test(header))
    throw new Error(path + ': only little-endian float32 C-order arrays are read');
  const shape = header.match(/'shape':\s*\(([^)]*)\)/)[1].split(',').filter((s) => s.trim()).map(Number);
  const data = new Float32Array(b.buffer.slice(b.byteOffset + off, b.byteOffset + b.length));
  return { shape, data };
}

function writeNpy(path, data, shape) {
  let h = `{'descr': '<f4', 'fortran_order': False, 'shape': (${shape.join(', ')}${shape.length === 1 ? ',' : ''}), }`;
  while ((10 + h.length + 1) % 64) h += ' ';
  h += '\n';
  const head = Buffer.alloc(10);
  head.write('\x93NUMPY', 0, 'latin1');
  head[6] = 1, head[7] = 0;
  head.writeUInt16LE(h.length, 8);
  fs.writeFileSync(path, Buffer.concat([head, Buffer.from(h, 'latin1'), Buffer.from(data.buffer, data.byteOffset, data.byteLength)]));
}

const median = (v) => { const s = [...v].sort((a, b) => a - b); const n = s.length; return n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2; };

async function session(model) {
  return ort.InferenceSession.create(model, {
    intraOpNumThreads: 1, interOpNumThreads: 1, executionMode: 'sequential', graphOptimizationLevel: 'all',
  });
}

async function calib(model, calibPath, out) {
  const s = await session(model);
  const x = readNpy(calibPath);
  const per = x.data.length / x.shape[0];
  const dims = [1, ...x.shape.slice(1)];
  const r = {};
  for (let k = 0; k < x.shape[0]; k++) {
    const feeds = { [s.inputNames[0]]: new ort.Tensor('float32', x.data.slice(k * per, (k + 1) * per), dims) };
    feeds[s.inputNames[0]].data.forEach((v) => {
      const e = r[s.inputNames[0]] || (r[s.inputNames[0]] = [Infinity, -Infinity]);
      if (v < e[0]) e[0] = v; if (v > e[1]) e[1] = v;
    });
    const res = await s.run(feeds);
    for (const name of s.outputNames) {
      const e = r[name] || (r[name] = [Infinity, -Infinity]);
      for (const v of res[name].data) { if (v < e[0]) e[0] = v; if (v > e[1]) e[1] = v; }
    }
  }
  fs.writeFileSync(out, JSON.stringify(r));
  console.log(`ranges of ${Object.keys(r).length} values from ${x.shape[0]} samples -> ${out}`);
}

async function bench(model, inputPath, runs, outPath) {
  const s = await session(model);
  const x = readNpy(inputPath);
  const feeds = { [s.inputNames[0]]: new ort.Tensor('float32', x.data, x.shape) };
  const warm = Math.max(3, Math.floor(runs / 10));
  let res;
  for (let i = 0; i < warm; i++) res = await s.run(feeds);
  const wall = [], cpu = [];
  for (let i = 0; i < runs; i++) {
    const c0 = process.cpuUsage(), t0 = process.hrtime.bigint();
    res = await s.run(feeds);
    const t1 = process.hrtime.bigint(), c1 = process.cpuUsage(c0);
    wall.push(Number(t1 - t0) / 1e6);
    cpu.push((c1.user + c1.system) / 1e3);
  }
  const y = res[s.outputNames[0]];
  writeNpy(outPath, y.data, y.dims);
  console.log(`onnxruntime ${ort.env.versions ? ort.env.versions.common : ''} model=${model.split('/').pop()} ` +
    `median_ms=${median(wall).toFixed(3)} min_ms=${Math.min(...wall).toFixed(3)} cpu_median_ms=${median(cpu).toFixed(3)} runs=${runs}`);
}

function compare(a, b, lsb) {
  const x = readNpy(a), y = readNpy(b);
  if (x.data.length !== y.data.length) throw new Error('sizes differ');
  const hist = {};
  let worst = 0, argmaxA = 0, argmaxB = 0;
  for (let i = 0; i < x.data.length; i++) {
    const e = Math.round(Math.abs(x.data[i] - y.data[i]) / lsb);
    hist[e] = (hist[e] || 0) + 1;
    worst = Math.max(worst, e);
    if (x.data[i] > x.data[argmaxA]) argmaxA = i;
    if (y.data[i] > y.data[argmaxB]) argmaxB = i;
  }
  const n = x.data.length;
  console.log(`compare: ${n} elements; LSB differences ${JSON.stringify(hist)}; worst ${worst} LSB; ` +
    `exact ${(100 * (hist[0] || 0) / n).toFixed(1)}%, within 1 LSB ${(100 * ((hist[0] || 0) + (hist[1] || 0)) / n).toFixed(1)}%; ` +
    `argmax ${argmaxA} vs ${argmaxB}`);
}

(async () => {
  const [cmd, ...a] = process.argv.slice(2);
  if (cmd === 'calib' && a.length === 3) await calib(...a);
  else if (cmd === 'bench' && a.length === 4) await bench(a[0], a[1], Number(a[2]), a[3]);
  else if (cmd === 'compare' && a.length === 3) compare(a[0], a[1], Number(a[2]));
  else { console.error('usage: see the comment at the top of bench/ort/ort.js'); process.exit(2); }
})().catch((e) => { console.error('ort.js: ' + e.message); process.exit(1); });
