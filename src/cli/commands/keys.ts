// Placeholder until the keys commands land; registers nothing.
import type { Command } from 'commander';
import type { CliContext } from '../context.ts';

export function register(_program: Command, _ctx: CliContext): void {}
