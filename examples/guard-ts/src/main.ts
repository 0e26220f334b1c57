// The bundle's entry: it runs the plugin, and exports nothing.
import { plugin } from './plugin';

void plugin.run();
