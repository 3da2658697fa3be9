export { isServed } from '../../runtime/discovery.js';
