/** The rollout engine: pure planning, observation, stepping and controls of a rollout run. */
export * from './types.js';
export { freezePlan, orderMembers, type PlanCluster, type FreezeResult } from './plan.js';
export { observeCluster, type ObserveInput, type ObservedDesired, type ObservedStatus } from './observe.js';
export { advance, initialState, clustersAtTarget, type StepResult } from './engine.js';
export {
  pause,
  resume,
  approve,
  abort,
  retry,
  applyControl,
  RolloutStateError,
  type ControlRequest,
  type RolloutControl,
} from './controls.js';
