// A shard Worker of the Train tab: started by the tab's own Worker (train/worker.ts), which
// coordinates; it holds one trainer replica and computes the shards it is sent (train/shard-server.ts).
/// <reference lib="webworker" />
import { loadTrain } from '../wasm/load-train';
import { ShardServer, serveShards } from './shard-server';

const scope = self as unknown as DedicatedWorkerGlobalScope;
const serve = serveShards(new ShardServer(loadTrain), (reply, transfer) => scope.postMessage(reply, transfer));
scope.onmessage = (e: MessageEvent) => serve(e.data);
