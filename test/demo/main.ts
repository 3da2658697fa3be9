// The README's main job. For now it brings up the local fleet environment (three Kubernetes
// control planes with kwok nodes) and tells how to reach it; later it runs the canary rollout.
import path from 'node:path';
import { startEnvironment, toolPath } from '@flotilla/test';

const clusters = Number(process.env.FLOTILLA_DEMO_CLUSTERS ?? 3);
const dir = path.resolve(process.env.FLOTILLA_DEMO_DIR ?? '.cache/demo');
const once = process.argv.includes('--once');

const t0 = performance.now();
const env = await startEnvironment({
  clusters: Array.from({ length: clusters }, (_, i) => ({ name: `cluster-${String.fromCharCode(97 + i)}`, nodes: 3 })),
  dir,
  keep: true,
});
const kubectl = toolPath('kubectl');
console.log(`\nFlotilla local fleet: ${clusters} clusters up in ${((performance.now() - t0) / 1000).toFixed(1)} s\n`);
for (const c of env.clusters) {
  console.log(`  ${c.name.padEnd(10)} ${c.server}  nodes: ${c.nodeNames.join(', ')}`);
  console.log(`             ${kubectl} --kubeconfig ${c.kubeconfigPath} get nodes`);
}
console.log(`\n  logs and kubeconfigs: ${env.dir}`);

if (once) {
  await env.stop();
} else {
  console.log('\nPress Ctrl-C to stop the fleet.');
  const stop = (): void => {
    console.log('\nstopping...');
    env.stop().then(
      () => process.exit(0),
      (err: unknown) => {
        console.error(err);
        process.exit(1);
      },
    );
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}
