import { type AITool, tool } from 'skein';
import { z } from 'zod';

/** A tool that needs approval before it runs; each path it "deletes" is pushed to `deleted`, so tests can count runs. */
export function deleteFileTool(deleted: string[]): AITool {
  return tool({
    name: 'delete_file',
    description: 'Deletes a file',
    parameters: z.object({ path: z.string() }),
    requiresApproval: true,
    execute: ({ path }) => {
      deleted.push(path);
      return `deleted ${path}`;
    },
  });
}
