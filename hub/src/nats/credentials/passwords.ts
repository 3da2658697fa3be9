/** Agent NATS passwords: random, returned once, stored only as bcrypt (what nats-server verifies). */
import { randomBytes } from 'node:crypto';
import bcrypt from 'bcryptjs';

export function newAgentPassword(): string {
  return randomBytes(24).toString('base64url');
}

export function bcryptHash(password: string, cost: number): Promise<string> {
  return bcrypt.hash(password, cost);
}
