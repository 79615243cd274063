import { render } from 'preact';
import { App } from './app.js';
import './console.css';

const root = document.getElementById('app');
if (root !== null) {
  root.replaceChildren();
  render(<App />, root);
}
