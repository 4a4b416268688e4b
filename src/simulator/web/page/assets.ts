/** The page's assets by file name, as the router serves them; kept as strings so `tsc` ships them. */
import { API_JS } from './api-js.js';
import { APP_JS } from './app-js.js';
import { CHAT_JS } from './chat-js.js';
import { DOM_JS } from './dom-js.js';
import { OVERLAYS_CSS } from './overlays-css.js';
import { OVERLAYS_JS } from './overlays-js.js';
import { PANELS_CSS } from './panels-css.js';
import { PANELS_JS } from './panels-js.js';
import { PHONE_CSS } from './phone-css.js';

export { pageHtml } from './html.js';

/** A static asset: its content type and body. */
export interface Asset {
  readonly type: string;
  readonly body: string;
}

const js = (body: string): Asset => ({ type: 'text/javascript; charset=utf-8', body });
const css = (body: string): Asset => ({ type: 'text/css; charset=utf-8', body });

/** Every asset of the page, by the name it is served under (`/assets/<name>`). */
export const ASSETS: Readonly<Record<string, Asset>> = {
  'app.js': js(APP_JS),
  'api.js': js(API_JS),
  'chat.js': js(CHAT_JS),
  'dom.js': js(DOM_JS),
  'overlays.js': js(OVERLAYS_JS),
  'panels.js': js(PANELS_JS),
  'phone.css': css(PHONE_CSS),
  'overlays.css': css(OVERLAYS_CSS),
  'panels.css': css(PANELS_CSS),
};
