/** The agent's version, reported to the hub at registration and in heartbeats. */
export const AGENT_VERSION = '0.1.0';
