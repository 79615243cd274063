/** esbuild bundles the stylesheet the entry imports into its own hashed file. */
declare module '*.css';
