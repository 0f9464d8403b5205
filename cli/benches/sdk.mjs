// The official TypeScript SDK that tests/clients/install.sh installs, for the benchmarks'
// peer servers (serve/ts_server.mjs, tasks/ts_task_server.mjs, asking/ts_asking_server.mjs):
// the clients folder is the server's first argument; `sdk(path)` imports a module of
// @modelcontextprotocol/sdk's ESM build, `nodeModule(path)` any module installed beside it.
import { pathToFileURL } from "node:url";
import { join } from "node:path";

export const clients = process.argv[2];
if (!clients) {
  console.error(`usage: node ${process.argv[1]} CLIENTS_DIR (run tests/clients/install.sh)`);
  process.exit(2);
}
export const nodeModule = (p) => import(pathToFileURL(join(clients, "node/node_modules", p)).href);
export const sdk = (p) => nodeModule(join("@modelcontextprotocol/sdk/dist/esm", p));
