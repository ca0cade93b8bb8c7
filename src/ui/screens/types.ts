export interface ScreenProps {
  /** The visible screen: only it takes keys and polls. Hidden screens keep their state. */
  active: boolean;
  width: number;
  /** Lines available, help bar included. */
  height: number;
}
