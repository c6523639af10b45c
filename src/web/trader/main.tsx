// The trader page's entry point. Browser main thread.
import { render } from 'preact';
import '../lib/page.css';
import { App } from './app.js';

render(<App />, document.getElementById('app')!);
