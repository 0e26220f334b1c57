// The bundle's entry (npm run build makes dist/plugin.mjs from it): it runs the plugin and
// exports nothing. The tests import src/plugin.ts instead.
import { plugin } from './plugin';

void plugin.run();
