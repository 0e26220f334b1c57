// node:readline as a bundle imports it: what the prelude made (end.js).
const m = globalThis.__escouadeModules.readline;
export const createInterface = m.createInterface;
export default m;
