// The plugin: what SVC_PLUGINS=acme-booking loads. Plain ES modules with JSDoc types, so the package ships
// as written (no build); @svc/plugin-kit and valibot are peers, the host's own copies at run time.
import { definePlugin } from '@svc/plugin-kit'
import acmeSpeech from './src/acme-speech.js'
import bookTable from './src/book-table.js'

export default definePlugin({
  name: 'acme',
  capabilities: [bookTable],
  providers: { speech: [acmeSpeech] },
})
