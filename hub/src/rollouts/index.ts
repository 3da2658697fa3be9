export * from './types.js';
export { freezePlan, orderMembers, type PlanCluster, type FreezeResult } from './plan.js';
export { observeCluster, type ObserveInput, type ObservedDesired, type ObservedStatus } from './observe.js';
export { advance, initialState, clustersAtTarget, type StepResult } from './engine.js';
export { pause, resume, approve, abort, retry, RolloutStateError, type RolloutControl } from './controls.js';
export {
  createRolloutScheduler,
  SCHEDULER_LOCK,
  type RolloutScheduler,
  type RolloutSchedulerDeps,
  type StepOutcome,
} from './scheduler.js';
export { createRolloutNotifier, type RolloutNotifier } from './notifier.js';
