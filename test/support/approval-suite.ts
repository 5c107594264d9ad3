import { type AITool, tool } from 'skein';
import type { EmulatorOptions } from 'skein/testing';
import { z } from 'zod';
import { type EmulatorAccess, emulatorPerTest } from './emulator.js';
import { deleteFileTool } from './example-tools.js';

/** What the approval suites share: a tool that needs approval, one that does not, and the runs of each. */
export interface ApprovalSuite extends EmulatorAccess {
  /** Paths `delete_file` (needs approval) deleted in this test. */
  readonly deleted: string[];
  /** Cities `get_weather` (needs none) was asked for in this test. */
  readonly weatherCalls: string[];
  /** `delete_file` and `get_weather`, in that order. */
  tools(): AITool[];
}

/**
 * For the enclosing describe: before each test a fresh emulator (see `emulatorPerTest`) and empty
 * records of the tools' runs, so a test can count exactly what ran.
 */
export function approvalSuite(options: EmulatorOptions = {}): ApprovalSuite {
  const deleted: string[] = [];
  const weatherCalls: string[] = [];
  const weather = tool({
    name: 'get_weather',
    description: 'Weather for a city',
    parameters: z.object({ city: z.string() }),
    execute: ({ city }) => {
      weatherCalls.push(city);
      return `sunny in ${city}`;
    },
  });
  beforeEach(() => {
    deleted.length = 0;
    weatherCalls.length = 0;
  });
  const access = emulatorPerTest(options);
  return {
    deleted,
    weatherCalls,
    tools: () => [deleteFileTool(deleted), weather],
    get emulator() {
      return access.emulator;
    },
    get url() {
      return access.url;
    },
  };
}
