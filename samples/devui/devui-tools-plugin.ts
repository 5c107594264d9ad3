/**
 * Tools for the Dev UI sample's agents, loaded by `samples/devui/skein.yaml` as a third-party
 * plugin (`module:`), the way an app adds its own tools to a config file.
 */
import { randomUUID } from 'node:crypto';
import { ContainerModule } from 'inversify';
import { z } from 'zod';
import { AITool, FunctionTool, type SkeinPlugin } from 'skein';

const getWeather = new FunctionTool({
  name: 'get_weather',
  description: 'The current weather in a city',
  parameters: z.object({ city: z.string() }),
  execute: ({ city }) => ({ city, forecast: 'sunny', temperatureC: 21 }),
});

export interface TableBooking {
  bookingId: string;
  restaurant: string;
  time: string;
  people: number;
}

// The sample's "real world": a booking commits the user, so the tool asks before each call.
const bookings: TableBooking[] = [];

/** Tables booked by the sample's `book_table` tool in this process (it only runs once the user approves). */
export function tableBookings(): readonly TableBooking[] {
  return bookings;
}

const bookTable = new FunctionTool({
  name: 'book_table',
  description: 'Books a table at a restaurant (asks the user to approve each booking)',
  parameters: z.object({ restaurant: z.string(), time: z.string(), people: z.number().int().positive() }),
  requiresApproval: true,
  execute: ({ restaurant, time, people }) => {
    const booking: TableBooking = { bookingId: randomUUID().slice(0, 8), restaurant, time, people };
    bookings.push(booking);
    return { booked: true, ...booking };
  },
});

export function devuiToolsPlugin(): SkeinPlugin {
  return {
    id: 'devui-tools',
    module: new ContainerModule(({ bind }) => {
      bind(AITool).toConstantValue(getWeather);
      bind(AITool).toConstantValue(bookTable);
    }),
  };
}
