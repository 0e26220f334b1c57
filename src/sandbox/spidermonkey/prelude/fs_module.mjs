// node:fs as a bundle imports it: readFileSync of the JSON files at the plugin's root.
const m = globalThis.__escouadeModules.fs;
export const readFileSync = m.readFileSync;
export default m;
