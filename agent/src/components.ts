/**
 * Every component `agent manager` can run, in the order they are set up; --components
 * (FLOTILLA_COMPONENTS) selects among them by name. Each lives in its own folder, whose
 * component.ts says what it needs and where it runs (runtime/component.ts): a new controller or
 * webhook is that file plus one line here.
 */
import type { AgentConfig } from './config.js';
import { broadcastJobComponent } from './controllers/broadcastjob/component.js';
import { workloadSpreadComponent } from './controllers/workloadspread/component.js';
import { cloneSetComponent } from './controllers/cloneset/component.js';
import { daemonSetComponent } from './controllers/daemonset/component.js';
import { containerRecreateRequestComponent } from './controllers/containerrecreaterequest/component.js';
import { imagePullJobComponent } from './controllers/imagepulljob/component.js';
import { nodeImageComponent } from './controllers/nodeimage/component.js';
import { podUnavailableBudgetComponent } from './controllers/podunavailablebudget/component.js';
import { podReadinessComponent } from './controllers/podreadiness/component.js';
import { sidecarSetComponent } from './controllers/sidecarset/component.js';
import { statefulSetComponent } from './controllers/statefulset/component.js';
import { hubLinkComponent } from './hublink/component.js';
import type { Component } from './runtime/component.js';
import { storageMigrationComponent } from './runtime/storage-migration/component.js';
import { webhookComponent } from './webhook/component.js';

export const components: readonly Component<AgentConfig>[] = [
  nodeImageComponent,
  imagePullJobComponent,
  cloneSetComponent,
  sidecarSetComponent,
  broadcastJobComponent,
  workloadSpreadComponent,
  statefulSetComponent,
  daemonSetComponent,
  containerRecreateRequestComponent,
  podUnavailableBudgetComponent,
  podReadinessComponent,
  webhookComponent,
  storageMigrationComponent,
  hubLinkComponent,
];
