/**
 * Tools for the Dev UI sample's agents, loaded by `samples/devui/skein.yaml` as a third-party
 * plugin (`module:`), the way an app adds its own tools to a config file.
 */
import { ContainerModule } from 'inversify';
import { z } from 'zod';
import { AITool, FunctionTool, type SkeinPlugin } from 'skein';

const getWeather = new FunctionTool({
  name: 'get_weather',
  description: 'The current weather in a city',
  parameters: z.object({ city: z.string() }),
  execute: ({ city }) => ({ city, forecast: 'sunny', temperatureC: 21 }),
});

export function devuiToolsPlugin(): SkeinPlugin {
  return {
    id: 'devui-tools',
    module: new ContainerModule(({ bind }) => {
      bind(AITool).toConstantValue(getWeather);
    }),
  };
}
