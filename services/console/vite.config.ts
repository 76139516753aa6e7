// Builds the console into dist/ for the API to serve at /console/: content-hashed files under
// dist/assets (served as immutable) and an index.html that names them (served no-cache).

import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

export default defineConfig({
  base: '/console/',
  plugins: [react()],
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    // The console is small; one chunk per build keeps the request count low.
    chunkSizeWarningLimit: 1024,
  },
});
