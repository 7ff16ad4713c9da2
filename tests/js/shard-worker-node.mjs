// A shard Worker under Node worker_threads: the same ShardServer the browser's shard Worker runs
// (web/src/train/pool.ts, transpiled by the test), around one attn_train instance.
import fs from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';

const { ShardServer, serveShards } = await import(workerData.poolUrl);
const { default: createAttnTrain } = await import(workerData.trainMjs);
const server = new ShardServer(() => createAttnTrain({ wasmBinary: fs.readFileSync(workerData.trainWasm) }));
parentPort.on('message', serveShards(server, (reply, transfer) => parentPort.postMessage(reply, transfer)));
