// The listening address. Nitro's node-server entry listens on NITRO_HOST or HOST and, when neither is set, on
// every interface; `npm start` sets HOST, but a plain `node .output/server/index.mjs` did not, and exposed a
// development server (its generated master key, the widget demo) to the network. Nitro runs its plugins
// while the entry creates the app, before it reads HOST to listen, so this first plugin sets the loopback
// default there (decisions "Abuse and cost (issue 30)"). HOST=0.0.0.0 (or ::) listens everywhere on purpose.
import { defineNitroPlugin } from 'nitropack/runtime'
import { listenHost } from '~/config'

export default defineNitroPlugin(() => {
  process.env.HOST = listenHost(process.env)
})
