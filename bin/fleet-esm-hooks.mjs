// Module hooks registered by bin/fleet-esm.mjs: a .ts or .tsx file under the project folder (outside
// node_modules) resolves with format "module", so the TypeScript loader (tsx) compiles it as an ES
// module; everything else resolves as it would without these hooks.
import { pathToFileURL } from 'node:url';

let scope;

export function initialize(data) {
  const href = pathToFileURL(data.scope).href;
  scope = href.endsWith('/') ? href : `${href}/`;
}

export async function resolve(specifier, context, nextResolve) {
  const resolved = await nextResolve(specifier, context);
  if (!scope || !resolved.url.startsWith(scope)) return resolved;
  const { pathname } = new URL(resolved.url);
  if (pathname.includes('/node_modules/') || !/\.tsx?$/.test(pathname) || pathname.endsWith('.d.ts')) return resolved;
  return { ...resolved, format: 'module' };
}
