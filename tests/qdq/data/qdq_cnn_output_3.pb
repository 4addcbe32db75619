BoutputJ≥≥Yю
вёюллл©КQ╦>КQ8©