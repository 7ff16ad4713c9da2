// Entry of the page (index.html): the styles, then the app.
import '../ui/styles.css';
import { start } from './page';

start();
