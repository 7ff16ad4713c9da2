// The compute Worker: runs the compute service (core-service.ts) off the page's thread.
/// <reference lib="webworker" />
import { createCoreService } from './core-service';
import type { WorkerRequest } from './protocol';

const scope = self as unknown as DedicatedWorkerGlobalScope;
const handle = createCoreService(scope.name, (msg, transfer = []) => scope.postMessage(msg, transfer));
scope.onmessage = (e: MessageEvent<WorkerRequest>) => void handle(e.data);
