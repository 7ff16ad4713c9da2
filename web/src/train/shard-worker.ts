// A shard Worker of the Train tab: started by the tab's own Worker (train/worker.ts), which
// coordinates; it holds one trainer replica and computes the shards it is sent (train/pool.ts).
/// <reference lib="webworker" />
import { loadTrain } from '../wasm/load-train';
import { ShardServer, type ShardRequest } from './pool';

const scope = self as unknown as DedicatedWorkerGlobalScope;
const server = new ShardServer(loadTrain);
// One request at a time, in arrival order (an ablation must land before the next job).
let queue: Promise<void> = Promise.resolve();
scope.onmessage = (e: MessageEvent<ShardRequest>) => {
  queue = queue.then(async () => {
    const out = await server.handle(e.data);
    if (out) scope.postMessage(out.reply, out.transfer);
  });
};
